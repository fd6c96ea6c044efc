"""What a command does to a debate: the library calls the CLI and the engine share."""
