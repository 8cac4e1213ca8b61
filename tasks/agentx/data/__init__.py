"""Data files (a package so that they travel in the wheel)."""
