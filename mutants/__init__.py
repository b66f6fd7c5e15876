"""Chapter mutants: does each chapter notice when the library it checks is wrong?

``make mutants`` executes every chapter that uses egmlib once unchanged (the
control) and once per mutant, a deliberately wrong version of one public egmlib
function installed before the chapter's first cell runs. A mutant is killed when
a cell of the chapter raises; the run fails if any mutant survives or any control
fails.

- :mod:`mutants.patch` replaces a function object wherever egmlib holds it;
- :mod:`mutants.catalog` is the list of mutants (data: one entry per mutant);
- :mod:`mutants.run` executes the chapters and prints the kill table.

egmlib itself has no hooks for this: the patch is applied from outside, by an
unsaved setup cell that the runner puts in front of the chapter's cells.
"""
