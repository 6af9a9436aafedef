"""Client libraries' own test suites run on arrayx: ``clients/run.py`` is the runner,
``clients/pytest_plugin.py`` the pytest plugin that puts an array namespace into each client's
parametrisation (README.md, section "Client test suites")."""
