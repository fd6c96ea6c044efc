"""The debate rules: state machine, reports, verdicts, metrics — pure parsing and rendering."""
