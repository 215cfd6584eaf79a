"""GPU primitives written in pyshader_tx's Python subset."""
