"""The console's UI code between the pages (``pages/``) and the register: no business rules.

- ``ui.framework``: what every page stands on -- the page frame and login gate, running a page and showing its
  errors, the store and its cached reads and writes, generic components, text escaping, exports.
- ``ui.features``: one module per area of the console (governance, labels, scoring, ...), adapting the
  register's reads and writes to that area's pages, with its figures and tables.

Features import the framework, never the reverse (an import contract in pyproject.toml).
"""
