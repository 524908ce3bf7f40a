"""societies package."""
