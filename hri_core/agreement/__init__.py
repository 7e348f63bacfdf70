"""Inter-annotator agreement on claim labels: Krippendorff's alpha, Cohen's kappa, confusion matrices.

The HRI paper (section V) asks that each claim be "labeled independently by at least two annotators
when feasible" and that "inter-annotator agreement should be measured and reported", because the
index is only as reliable as the labels under it (DOMAIN.md section 8). This package is that
measurement. The annotation pages, the register and ``python -m hri_core agreement`` call it; it
reads no files.

Data: a rating is ``Rating(unit, rater, value)``; a unit is what is judged (a claim, keyed e.g. by
``response_id/claim_id``), a rater is an annotator, a value is a string (nominal) or a number. A rater
who skipped a unit simply has no rating for it. The same (unit, rater) twice with the same value
counts once; with different values it is an error (``AgreementError`` names the unit and rater).

The measures, one module each: ``ratings`` (the data and the unit-by-value count table they are computed from),
``alpha`` (Krippendorff's alpha), ``kappa`` (Cohen's kappa and confusion matrices), ``groups`` (per group of
ratings and per pair of raters), ``multilabel`` (claims with several labels), ``bootstrap`` (confidence
intervals) and ``rows`` (ratings read from a CSV file). Their public names are imported from here.

Why this is not a wrapper around the PyPI ``krippendorff`` package (0.9.0): where the package computes an
alpha it is this one to about 1e-16 (``tests/hri_core/test_agreement_package.py``; it stays the tests'
independent implementation), but it lacks three things this package needs:

* ``D_o`` and ``D_e``: ``krippendorff.alpha`` returns alpha only, while ``AlphaResult`` reports both
  disagreements; getting them means building the coincidence and difference matrices the package builds
  inside, so calling it would compute alpha twice, with two implementations of each difference;
* weighted units: a bootstrap resample weighs each unit by how often it was drawn; the package takes unit
  rows only, so 1,000 resamples would each copy the drawn rows (``np.repeat``) before counting them again;
* undefined alpha: the package raises ``ValueError`` when one value or no pairable unit is left, and
  returns NaN with a ``RuntimeWarning`` when a resample draws only one of several values; here those are
  ``None`` with a ``note`` and resamples counted as ``undefined``.
"""

from .alpha import AlphaResult, krippendorff_alpha
from .bootstrap import BootstrapInterval, bootstrap_alpha, bootstrap_kappa
from .groups import PairAgreement, alpha_by_group, group_ratings, pairwise_agreement, ratings_by_rater_pair
from .kappa import ConfusionMatrix, KappaResult, cohen_kappa, confusion_matrices
from .multilabel import MultiLabelAgreement, multilabel_agreement, severity_from_contributions
from .ratings import LEVELS, AgreementError, Level, Rating, Value

__all__ = [
    "LEVELS",
    "AgreementError",
    "AlphaResult",
    "BootstrapInterval",
    "ConfusionMatrix",
    "KappaResult",
    "Level",
    "MultiLabelAgreement",
    "PairAgreement",
    "Rating",
    "Value",
    "alpha_by_group",
    "bootstrap_alpha",
    "bootstrap_kappa",
    "cohen_kappa",
    "confusion_matrices",
    "group_ratings",
    "krippendorff_alpha",
    "multilabel_agreement",
    "pairwise_agreement",
    "ratings_by_rater_pair",
    "severity_from_contributions",
]
