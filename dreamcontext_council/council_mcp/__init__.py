"""`dreamcontext council mcp`: the council as an MCP server over stdio.

The tools call the same library functions as the CLI (`engine.setup.launch`, `actions`,
`views`); this package only adapts them to the protocol: typed results, tool errors with
the library's one-line message, background runs with progress, and read-only resources.
"""
