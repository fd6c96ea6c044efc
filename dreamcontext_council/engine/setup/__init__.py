"""From the command's options to a checked run: remembered settings, pre-flight, estimate, launch."""
