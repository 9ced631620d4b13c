"""Judges calibrated against humans: per judge version and task, how its verdicts agree with
the human majority on the same items (annotation.calibration.report, from what
annotation.calibration.data reads), and the loop that sends the items where they disagree, or
where the judge is least sure, back to humans (annotation.calibration.services)."""
