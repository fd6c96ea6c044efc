"""The server's tools and resources by name, without loading the MCP SDK (for `--help`)."""

from __future__ import annotations

# In the order `dreamcontext council mcp --help` names them.
TOOLS = {
    "council_start": "start a debate (or resume one); returns its id while it runs",
    "council_wait": "follow a running debate with progress notifications until it stops",
    "council_status": "where a debate stands, with its files as resources",
    "council_board": "the chamber board: convergence, one row per persona, options tally",
    "council_report": "the final report, whole or one ## section",
    "council_list": "debates, newest first",
    "council_round_context": "everything a persona needs this round (hand-driven debates)",
    "council_verdict": "record a persona's verdict for a round",
    "council_report_append": "add a persona's round entry to its report.md",
    "council_promote": "copy the verdict into a knowledge doc",
}
RESOURCES = {"council://<id>/<path>": "a file of a debate, read-only"}


def catalog_text() -> str:
    """The tools and resources as `--help` lists them."""
    lines = ["\b", "Tools:"]
    lines += [f"  {name:<23} {what}" for name, what in TOOLS.items()]
    lines += ["", "\b", "Resources:"]
    lines += [f"  {name:<23} {what}" for name, what in RESOURCES.items()]
    return "\n".join(lines)
