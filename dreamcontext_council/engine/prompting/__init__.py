"""What each model call reads: prompts, compressed answers, seating, claims and attachments."""
