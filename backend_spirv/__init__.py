"""SPIR-V backend (to come in its own issue)."""
