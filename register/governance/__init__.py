"""The registers (sources, claims), minimum evidence rules, the pre-submission checklist, the release report."""
