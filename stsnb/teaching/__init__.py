"""The teaching layer: what a reader sees beside the numbers.

Holds the figure style (``plots``), loss values and gradients on grids (``loss_curves``), training curves
(``training_curves``), a first look at the data (``data_look``), how to read a run's verdicts (``verdict_notes``),
each training notebook's opening pipeline figure (``pipeline``), the answer sheet, each exercise's run and measured
runtime (``answers``, with ``templates/answers``) and the static site of the runs (``book``, with ``templates/book``).

May import: data, models, training, evaluation, runs.
"""
