package sampler_test

import (
	"fmt"

	"github.com/lowmem/llm/sampler"
)

func Example() {
	// Greedy decoding with a repeat penalty: token 2 wins, then its penalty
	// hands the lead to token 1; once both are penalized 2 leads again.
	cfg := sampler.GreedyConfig()
	cfg.RepeatPenalty = 1.5
	s, err := sampler.New(cfg, 4)
	if err != nil {
		fmt.Println(err)
		return
	}
	var history []int32
	for range 3 {
		logits := []float32{0.5, 2.5, 3.0, -1} // fresh from the model each step
		tok := s.Sample(logits, history)
		history = append(history, tok)
	}
	fmt.Println(history)
	// Output: [2 1 2]
}

func Example_seeded() {
	cfg := sampler.DefaultConfig(7)
	s, err := sampler.New(cfg, 5)
	if err != nil {
		fmt.Println(err)
		return
	}
	draw := func() []int32 {
		var out []int32
		for range 8 {
			out = append(out, s.Sample([]float32{1, 1.2, 0.8, -3, 1.1}, nil))
		}
		return out
	}
	first := draw()
	s.Reset() // same seed again: same tokens
	fmt.Println(fmt.Sprint(first) == fmt.Sprint(draw()))
	// Output: true
}

func ExampleConfig_Validate() {
	cfg := sampler.DefaultConfig(1)
	cfg.TopP = 1.5
	fmt.Println(cfg.Validate())
	// Output: sampler: top_p 1.5 outside (0, 1] (1 turns it off): sampler: invalid option
}
