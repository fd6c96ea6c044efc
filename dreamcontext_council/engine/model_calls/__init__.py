"""Model calls for a run: budget admission, usage accounting, ordered writes and progress."""
