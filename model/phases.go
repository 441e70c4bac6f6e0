package model

import "github.com/lowmem/llm/internal/ops"

// The phases of a forward pass as CPU profiles name them (pprof label
// "phase"; see ops.Phase). They are made once and never change.
var (
	phEmbed     = ops.NewPhase("embed")
	phNorm      = ops.NewPhase("norm")     // RMSNorms and residual adds
	phQuantize  = ops.NewPhase("quantize") // activations converted for the kernels
	phQKV       = ops.NewPhase("matmul:qkv")
	phRope      = ops.NewPhase("rope") // biases, Q/K norms, RoPE, query scale
	phAttention = ops.NewPhase("attention")
	phConv      = ops.NewPhase("conv") // short convolution (lfm2), Mamba-2's convolution
	phScan      = ops.NewPhase("scan") // Mamba-2's scan, gate and grouped norm (granitehybrid)
	phO         = ops.NewPhase("matmul:o")
	phGateUp    = ops.NewPhase("matmul:gate/up")
	phDown      = ops.NewPhase("matmul:down")
	phMoE       = ops.NewPhase("moe") // router and experts
	phOutput    = ops.NewPhase("output")
)
