"""The debate folder: paths, names, atomic writes, locks, index and live file."""
