__all__ = []  # being written
