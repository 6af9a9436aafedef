"""A short tour of arrayx on the default device (cuda:0 when a GPU is usable, else cpu)."""

import arrayx as xp

x = xp.linspace(0, 2 * xp.pi, 8, dtype=xp.float32)
y = xp.sin(x) ** 2 + xp.cos(x) ** 2          # elementwise, on the device
a = xp.reshape(xp.arange(12, dtype=xp.float64), (3, 4))
col_means = xp.mean(a, axis=0)
gram = a @ a.mT                               # matmul with a transposed view, no copy

print("device:", x.device)
print("sin^2 + cos^2 == 1:", bool(xp.all(xp.abs(y - 1) < 1e-6)))
print("column means:", col_means)
print("gram matrix:", gram)
print("back on the host:", gram.to_device("cpu"))
