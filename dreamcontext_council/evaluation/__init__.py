"""Evaluation: asking a set of questions of the council and of single-model methods, and scoring them."""
