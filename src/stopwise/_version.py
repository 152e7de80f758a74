"""The library version, stamped on every record stopwise writes."""

__version__ = "0.2.0.dev0"
