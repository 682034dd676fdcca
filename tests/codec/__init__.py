"""The codec: amber.dumps and amber.loads, frames and streams, every type they keep."""
