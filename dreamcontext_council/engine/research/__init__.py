"""Research tools through MCP: which tool servers a run may start, and each persona's toolbox."""
