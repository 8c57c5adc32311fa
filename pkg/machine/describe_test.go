package machine

import (
	"runtime"
	"testing"
)

func TestCPUModel(t *testing.T) {
	cpuinfo := "processor\t: 0\nvendor_id\t: GenuineIntel\nmodel\t\t: 85\n" +
		"model name\t: Intel(R) Xeon(R)  Platinum 8375C CPU @ 2.90GHz\n\nprocessor\t: 1\nmodel name\t: other\n"
	if got := cpuModel([]byte(cpuinfo)); got != "Intel(R) Xeon(R) Platinum 8375C CPU @ 2.90GHz" {
		t.Errorf("cpuModel = %q", got)
	}
	if got := cpuModel([]byte("processor\t: 0\nCPU part\t: 0xd0c\n")); got != "" {
		t.Errorf("cpuModel without a model name = %q", got)
	}
}

func TestDescribe(t *testing.T) {
	m := Describe()
	if m.Host == "" || m.Cores != runtime.NumCPU() || m.Kernel == "" {
		t.Errorf("machine %+v", m)
	}
}
