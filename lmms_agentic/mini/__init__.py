"""Builders of the bundled mini splits (self-made, schema-faithful data for the demo and tests)."""
