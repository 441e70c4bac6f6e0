// Package ops holds the numerical operations of a forward pass — matrix
// multiplication of quantized weights by activations, RMSNorm, RoPE,
// activation functions — and the persistent thread pool they run on.
//
// Every operation writes into caller-provided memory and allocates nothing,
// so a decode step run through an Exec leaves the Go heap untouched.
//
//	pool := ops.NewPool(2)
//	defer pool.Close()
//	e := ops.NewExec(pool)
//	xq, _ := e.Quantize(m.VecType, x, m.Cols, 1, buf)
//	e.MatMul(m, xq, 1, out, m.Rows)
//
// Matrices that read the same activation run as one job of the pool
// (MatMulParts), a gated feed-forward layer's gate, up and activation as
// one (MatMulGated), and a projection followed by a residual add as one
// (MatMulAdd): fewer barriers per token, and the same arithmetic.
package ops
