"""Views of a debate: board, timeline, summaries, show, list, dashboard and export."""
