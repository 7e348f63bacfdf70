"""The console's framework: what every page stands on, whatever it shows.

The page frame and login gate (``shell``, ``auth``, ``filters``), how a page runs and shows an error (``page``,
``errors``), the one store and its cached reads and writes (``data``), generic display components
(``components``) and the editor of a versioned table (``versioned_table``), text escaping (``text``), exports
(``exports``), and the server's and browser's start-up work (``collector``, ``browser_preload``). It never imports
``ui.features`` (an import contract in pyproject.toml).
"""
