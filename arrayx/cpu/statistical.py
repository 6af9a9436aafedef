# being written
