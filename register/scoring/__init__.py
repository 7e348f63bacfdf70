"""Scoring at rest: versioned profiles, the bulk SQL scorer, impact preview, reproduction, calibration, elicitation."""
