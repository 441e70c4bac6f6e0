// Command mkmodel writes a GGUF model file with random weights in the
// shape of a real model, so that speed and memory can be measured without
// downloading anything:
//
//	go run ./internal/cmd/mkmodel -shape llama-3.1-8b -type q4_k_m -o /tmp/llama-3.1-8b-q4_k_m.gguf
//
// The file has the real model's hyper-parameters, tensor names, ggml
// dimension order and (for the quantized -types) llama.cpp's per-tensor
// mix of quantization types, as llama-quantize picks them without an
// importance matrix (with one for the lattice types iq3_xxs … iq1_s), so
// it is as large and as slow to run as the real one. Its tokenizer is a
// synthetic SentencePiece vocabulary of the real size (WordPiece for the
// embedding models), and its output is gibberish.
//
// Quantized blocks are drawn directly (random codes, scales chosen so the
// dequantized weights have a standard deviation of about 1/sqrt(fan-in))
// rather than by quantizing floats, so an 8B file takes seconds of CPU,
// and tensors are streamed to the file, so memory use stays small. The
// same -seed gives the same bytes.
//
// Flags:
//
//	-shape  tiny, tinyllama-1.1b, llama-3.1-8b, qwen2.5-7b, gemma-2-9b,
//	        qwen3-8b, gemma-3-12b, phi-4-mini, granite-3.3-2b,
//	        granite-3.1-1b-a400m, smollm3-3b, olmo-2-1b, ernie-4.5-0.3b,
//	        ernie-4.5-21b-a3b (-layers 2 -type q8_0 keeps a dense and an
//	        expert block under 2 GB),
//	        smallthinker-4b-a0.6b, smallthinker-21b-a3b (-layers 5
//	        -experts 8 -vocab 8192 -type q8_0: 0.36 GiB),
//	        falcon-h1-1.5b (falcon-h1: attention and Mamba-2 in every
//	        layer),
//	        minicpm4-8b (minicpm: MiniCPM's multipliers and LongRoPE),
//	        minicpm3-4b (minicpm3: deepseek2's latent attention, dense),
//	        olmoe-1b-7b (olmoe: olmo2's Q/K norms, 64 experts),
//	        minimax-m2 (minimax-m2: Q/K norms across the heads, half of
//	        each head rotated, 256 sigmoid-routed experts; -layers 4
//	        -experts 8 -vocab 8192),
//	        k-exaone-236b-a23b (exaone-moe: exaone4's windows and NoPE on
//	        pre-norm blocks, 128 experts and a shared one, the MTP block;
//	        -layers 4 -experts 8 -vocab 8192),
//	        cohere2moe-30b-a3b-unverified (cohere2moe: cohere2's parallel
//	        block, dense-first windows, 128 experts and a shared one,
//	        their sum halved, the MTP block; widths unverified; -layers 4
//	        -experts 8 -vocab 8192),
//	        falcon-mamba-7b (mamba: Mamba-1 layers alone),
//	        mamba-codestral-7b (mamba2: Mamba-2 layers alone),
//	        jamba-reasoning-3b (jamba: Mamba-1 and attention layers),
//	        rwkv7-g1-1.5b and rwkv7-g1-2.9b (rwkv7: RWKV-7 time and
//	        channel mixes, no attention; widths recalled),
//	        rwkv6-world-1.6b and rwkv6-world-7b (rwkv6: RWKV-6's
//	        data-dependent time mix and gated channel mix),
//	        qrwkv6-32b (rwkv6qwen2: RWKV-6's time mix in Qwen2.5's
//	        body; -layers 2 -vocab 8192 -type q8_0),
//	        arwkv-7b (arwkv7: RWKV-7's time mix in Qwen2.5's body,
//	        gated; -layers 2 -vocab 8192),
//	        seed-oss-36b, exaone-4.0-1.2b, glm-4-9b (-layers 2 -type q8_0
//	        keeps its widths under 2 GB), glm-4-32b (-layers 1 -type
//	        q4_k_m), glm-4-9b-chat (chatglm; -layers 4 -vocab 8192),
//	        qwen3-30b-a3b, qwen1.5-moe-a2.7b (qwen2moe: qwen2's attention,
//	        60 experts and a gated shared expert), phi-3.5-moe (phimoe:
//	        phi3's LongRoPE attention with biases, 16 experts of 6400;
//	        -layers 2 -experts 4 -vocab 8192), hunyuan-a13b (hunyuan-moe:
//	        hunyuan-dense's attention, 64 experts as wide as the FFN and
//	        a shared expert; -layers 4 -experts 4 -vocab 8192), dots.llm1
//	        (dots1: qwen3's attention, a dense layer, 128 sigmoid-routed
//	        experts and 2 shared; -layers 4 -experts 8 -vocab 8192),
//	        mellum2-12b-a2.5b
//	        (mellum: qwen3moe's block, 64 experts of 896, three windowed
//	        layers of four; -layers 4 -experts 8 -vocab 8192: 0.60 GiB
//	        F16), grovemoe-33b-a3b (grovemoe: qwen3moe's block and an
//	        adjugate expert of 128 for each pair of experts; -layers 4
//	        -experts 16 -vocab 8192: 0.81 GiB F16), maincoder-1b (maincoder: Q/K norms after NORM RoPE),
//	        plamo3-mlx-defaults (plamo3: gemma3's norms, SwiGLU over a
//	        fused gate and up, seven windowed layers of eight; -layers 4
//	        -vocab 8192), jais-2-8b (jais2: nemotron's LayerNorms and
//	        ReLU² with every bias; -layers 4 -vocab 8192),
//	        mimo-v2-flash (mimo2: keys of 192 and values of 128, 4 KV
//	        heads on the global layers and 8 on the windowed ones with
//	        sinks, 256 sigmoid-routed experts; -layers 4 -experts 8
//	        -vocab 8192: 2.32 GiB F16),
//	        xverse-7b (xverse: llama's blocks, untied), orion-14b (orion:
//	        xverse's with LayerNorms of weight and bias), refact-1.6b
//	        (refact: llama's blocks with ALiBi on one KV head),
//	        baichuan2-7b and baichuan2-13b (baichuan: NORM RoPE at 32
//	        layers, ALiBi at 40, neither at any other depth, so -layers
//	        4 cuts place no tokens; -layers 4 -vocab 8192: 0.21 to 1.43
//	        GiB Q8_0), codeshell-7b (codeshell: starcoder2's block with
//	        NEOX RoPE over whole heads),
//	        nanbeige4-looped-unverified (nanbeige: llama's block, the stack
//	        run twice; -layers 4 -vocab 8192: 0.80 GiB F16),
//	        talkie-13b-unverified (talkie: no norm weights, Q/K norms after
//	        NEOX RoPE with a gain a query head, the embeddings added after
//	        every block; -layers 4 -vocab 8192: 2.52 GiB F16),
//	        llama-3.3-nemotron-super-49b (deci: per-layer heads and
//	        widths, blocks without attention; its first 12 blocks only;
//	        -layers 4 -vocab 8192), openelm-270m and openelm-1.1b
//	        (openelm: per-layer heads, KV heads and widths, fused QKV,
//	        Q/K norms; -layers 4 -vocab 8192),
//	        qwen3.5-0.8b and qwen3.5-9b (qwen35: gated delta-net and gated
//	        attention; -layers 2 keeps the 9B's widths under 2 GB),
//	        qwen3.5-35b-a3b (qwen35moe: the same blocks with 256 experts
//	        and a gated shared expert), qwen3-next-80b-a3b (qwen3next),
//	        deepseek-v2-lite and glm-4.7-flash (deepseek2),
//	        mistral-small-4-119b (mistral4: deepseek2's blocks, the
//	        experts' gate and up fused),
//	        glm-4.5-air and glm-4.6 (glm4moe, with their NextN block;
//	        -layers 2 -experts 8 and -layers 4 -experts 8 -type q8_0
//	        -vocab 4096 stay under 2 GB), ling-mini-2.0 (bailingmoe2;
//	        -experts keeps a multiple of its 8 groups),
//	        command-r7b (cohere2), afm-4.5b (arcee), apertus-8b
//	        (apertus), hunyuan-7b (hunyuan-dense) (-layers 4 -vocab
//	        32000 keeps each under 1 GB), exaone-3.5-2.4b (exaone),
//	        starcoder2-3b (starcoder2), codegemma-2b (gemma),
//	        nemotron-mini-4b (nemotron), stablelm-2-1.6b (stablelm),
//	        phi-2 (phi2) (-layers 4 -vocab 8192 -type
//	        q8_0: 0.30 to 0.45 GiB), gpt2-xl (gpt2),
//	        starcoderbase-1b (starcoder), pythia-1.4b (gptneox),
//	        falcon-7b (falcon: phi2's parallel block without biases, one
//	        KV head),
//	        bitnet-b1.58-2b-4t (bitnet), internlm2.5-7b (internlm2), olmo-1b (olmo),
//	        aya-expanse-8b and c4ai-command-r-v01 (command-r), or the
//	        embedding models embeddinggemma-300m (gemma-embedding),
//	        nomic-embed-text-v1.5 (nomic-bert),
//	        nomic-embed-text-v2-moe (nomic-bert-moe), modernbert-base
//	        (modern-bert), jina-embeddings-v2-base-en (jina-bert-v2),
//	        bge-small-en-v1.5 and all-minilm-l6-v2 (bert), whose mixes
//	        agree with llama-quantize's too (-list prints them); and
//	        jina-embeddings-v3 (jina-bert-v3), eurobert-210m (eurobert),
//	        llama-embed-nemotron-8b (llama-embed) and neobert (neo-bert),
//	        of which only F16 cuts quantized to
//	        Q8_0 by llama-quantize were run, not the mixes compared
//	-type   f16, q8_0, q4_0, q4_k_m, q3_k_m, q2_k, iq4_xs, iq4_nl, iq3_s,
//	        mxfp4_moe (gpt-oss's mix: the experts MXFP4, the rest Q8_0),
//	        or the lattice types iq3_xxs, iq2_m, iq2_s, iq2_xs, iq2_xxs,
//	        iq1_m, iq1_s (their mixes are llama-quantize's with an
//	        importance matrix, which it needs for them), or the ternary
//	        tq1_0, tq2_0 (BitNet b1.58's)
//	-o      output file (required)
//	-seed   random seed (default 1)
//	-imatrix also write an importance matrix of ones for the shape's
//	        matrices (llama.cpp's legacy format), with which llama-quantize
//	        makes the types it refuses to make without one:
//
//	go run ./internal/cmd/mkmodel -shape tinyllama-1.1b -type f16 -o tl-f16.gguf -imatrix tl.imatrix
//	llama-quantize --imatrix tl.imatrix tl-f16.gguf tl-iq2_xxs.gguf IQ2_XXS
//
//	-fuse-qkv write each block's attn_q, attn_k and attn_v (and their
//	        biases) as one attn_qkv, their rows in that order, as
//	        convert_hf_to_gguf.py's --fuse-qkv writes them; llama-quantize
//	        keeps it (attn_v's type rule), and the mix here gives it the
//	        same type. Refused for the architectures that refuse such a
//	        file (model.QKVSeparate):
//
//	go run ./internal/cmd/mkmodel -shape llama-3.1-8b -type f16 -layers 2 -vocab 8192 -fuse-qkv -o l-fused.gguf
//	llama-quantize l-fused.gguf l-fused-q4_k_m.gguf Q4_K_M
//
//	-list   print the shapes and exit
package main
