"""The debate itself: rounds, convergence checks, synthesis and the baseline answer."""
