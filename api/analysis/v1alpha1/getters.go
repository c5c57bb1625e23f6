package v1alpha1

// AdvanceOrDefault is spec.advance, Analysis when unset.
func (s *MetricGateSpec) AdvanceOrDefault() AdvancePolicy {
	if s.Advance == "" {
		return AdvanceOnAnalysis
	}
	return s.Advance
}

// OnFailureOrDefault is spec.onFailure, Abort when unset.
func (s *MetricGateSpec) OnFailureOrDefault() FailureAction {
	if s.OnFailure == "" {
		return FailureAbort
	}
	return s.OnFailure
}

// HistoryLimitOrDefault is spec.historyLimit, 10 when unset.
func (s *MetricGateSpec) HistoryLimitOrDefault() int {
	if s.HistoryLimit <= 0 {
		return 10
	}
	return int(s.HistoryLimit)
}

// RunsAt reports whether the gate analyses step (from 1) of a release.
func (s *MetricGateSpec) RunsAt(step int32) bool {
	for _, st := range s.Run.Steps {
		if st == step {
			return true
		}
	}
	return false
}
