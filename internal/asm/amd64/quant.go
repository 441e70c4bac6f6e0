package main

// quantFiles lists the files of package quant.
func quantFiles() []outFile {
	return []outFile{
		{"f32", func() { dotFloat(elemF32, avx2); dotFloat(elemF32, avx512) }},
		{"f16", func() { dotFloat(elemF16, avx2); dotFloat(elemF16, avx512) }},
	}
}

// kvFiles lists the files of package kv.
func kvFiles() []outFile { return nil }
