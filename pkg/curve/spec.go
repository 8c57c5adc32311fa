package curve

import (
	"errors"
	"fmt"
	"strings"
)

// Spec is what to measure across load: an open-loop phase at each of
// Rates, and the capacity at the objective SLO, searched to Precision.
type Spec struct {
	Rates     []Rate
	SLO       SLO
	Precision float64
}

// Enabled reports whether s measures anything.
func (s Spec) Enabled() bool { return len(s.Rates) > 0 || len(s.SLO) > 0 }

// ParseSpec parses the texts of --rates, --slo and --slo-precision (each
// empty for none; precision empty for DefaultPrecision); each error names
// its flag.
func ParseSpec(rates, slo, precision string) (Spec, error) {
	s := Spec{Precision: DefaultPrecision}
	var errs []error
	var err error
	if strings.TrimSpace(rates) != "" {
		if s.Rates, err = ParseRates(rates); err != nil {
			errs = append(errs, fmt.Errorf("--rates: %w", err))
		}
	}
	if strings.TrimSpace(slo) != "" {
		if s.SLO, err = ParseSLO(slo); err != nil {
			errs = append(errs, fmt.Errorf("--slo: %w", err))
		}
	}
	if strings.TrimSpace(precision) != "" {
		if s.Precision, err = ParsePrecision(precision); err != nil {
			errs = append(errs, fmt.Errorf("--slo-precision: %w", err))
		}
	}
	return s, errors.Join(errs...)
}
