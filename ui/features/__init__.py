"""The console's features: one module per area, adapting the register to the pages of that area.

Each holds the area's cached reads (``ui.framework.data.cached``), its figures and tables, and the components only
its pages use: ``overview`` (the Overview's figures) and ``warmup`` (computed while the first visitor logs in),
``responses`` (the Responses list, a response's detail, the review queue), ``audit_trail``, ``governance`` (source
and claims registers, evidence rules, checklist), ``authority``, ``labels`` (rubric, batches, workbench,
adjudication, agreement), ``proposal_review`` and ``answer_view`` (the workbench's judge proposals),
``verification``, ``feedback``, ``scoring`` (profiles, elicitation, calibration), ``rag_metrics``, ``intake``
(imports, quarantine, inbox), ``figures`` and ``figures_scoring`` (Plotly builders) and ``highlight`` (claims marked
in an answer). Features import the framework, never the reverse.
"""
