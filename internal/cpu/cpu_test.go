package cpu

import "testing"

func TestLevels(t *testing.T) {
	for _, c := range []struct {
		cpu  Level
		env  string
		want Level
	}{
		{AVX512VBMI, "", AVX512VBMI},
		{AVX512VBMI, "avx2", AVX2},
		{AVX512VBMI, "AVX512", AVX512},
		{AVX2, "avx512vnni", AVX2}, // never above the CPU
		{AVX512VNNI, "generic", Generic},
		{AVX512VNNI, "avx3", Generic}, // unknown: the safe level
		{I8MM, "", I8MM},
		{I8MM, "dotprod", DotProd},
		{I8MM, "NEON", NEON},
		{DotProd, "i8mm", DotProd},
		{NEON, "generic", Generic},
		{I8MM, "avx2", Generic},       // another architecture's level: the safe one
		{AVX512VBMI, "neon", Generic}, // not "min(neon, avx512vbmi)"
		{Generic, "neon", Generic},
	} {
		if d, got := levels(c.cpu, c.env); got != c.want || d != c.cpu {
			t.Errorf("levels(%v, %q) = %v, %v; want %v, %v", c.cpu, c.env, d, got, c.cpu, c.want)
		}
	}
}

func TestParseLevel(t *testing.T) {
	for l := Generic; l <= I8MM; l++ {
		if got, err := ParseLevel(l.String()); err != nil || got != l {
			t.Errorf("ParseLevel(%q) = %v, %v", l.String(), got, err)
		}
	}
	if _, err := ParseLevel("sse"); err == nil {
		t.Error("ParseLevel(sse): no error")
	}
}

func TestHas(t *testing.T) {
	if !Has(Generic) {
		t.Error("Has(Generic) is false")
	}
	if Has(Max() + 1) {
		t.Errorf("Has(%v) is true above Max %v", Max()+1, Max())
	}
	if Max() > Detected() {
		t.Errorf("Max %v above Detected %v", Max(), Detected())
	}
}

func TestDecodeModel(t *testing.T) {
	for _, c := range []struct {
		vendor string
		eax    uint32
		want   Model
	}{
		{"AuthenticAMD", 0x00A10F11, Model{"AuthenticAMD", 0x19, 0x11}}, // EPYC 9004 (Zen 4)
		{"GenuineIntel", 0x000806F8, Model{"GenuineIntel", 6, 0x8F}},    // Sapphire Rapids
		{"GenuineIntel", 0x000C06F2, Model{"GenuineIntel", 6, 0xCF}},    // Emerald Rapids
		{"GenuineIntel", 0x00000F29, Model{"GenuineIntel", 15, 2}},      // family 15, no extended family
	} {
		if got := decodeModel(c.vendor, c.eax); got != c.want {
			t.Errorf("decodeModel(%s, %#x) = %+v, want %+v", c.vendor, c.eax, got, c.want)
		}
	}
	if !(Model{"AuthenticAMD", 0x19, 0x11}).Split512() && Detected() >= AVX512 {
		t.Errorf("Zen 4 with AVX-512 is not Split512")
	}
	if (Model{"GenuineIntel", 6, 0x8F}).Split512() {
		t.Errorf("Sapphire Rapids is Split512")
	}
	if !(Model{"GenuineIntel", 6, 0xCF}).IntelAVX512() && Detected() >= AVX512 {
		t.Errorf("Emerald Rapids with AVX-512 is not IntelAVX512")
	}
	if (Model{"AuthenticAMD", 0x19, 0x11}).IntelAVX512() {
		t.Errorf("Zen 4 is IntelAVX512")
	}
	t.Logf("this CPU: %v (split 512-bit: %v, Intel AVX-512: %v)", CPU(), CPU().Split512(), CPU().IntelAVX512())
}
