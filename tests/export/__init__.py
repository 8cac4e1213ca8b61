"""Tests of the upstream exports: output safety and the core-based task folders."""
