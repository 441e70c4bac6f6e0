// Package tokenizer converts text to token ids and back exactly as
// llama.cpp does, for the vocabularies stored in GGUF model files.
//
// Five tokenizer models are implemented:
//
//   - "llama": SentencePiece BPE (Llama 1/2, Mistral, Phi-3, Gemma's
//     format). Spaces become "▁", a space is put in front of the text,
//     adjacent symbols are merged by token score, and characters the
//     vocabulary lacks are spelled as byte tokens <0xNN>.
//   - "gpt2": byte-level BPE (GPT-2, Qwen2, Llama 3, DeepSeek, Falcon,
//     StarCoder, MPT …). The text is split into words by the
//     pre-tokenizer named in tokenizer.ggml.pre, each word is spelled in
//     GPT-2's byte alphabet, and symbols are merged by merge rank.
//   - "bert": WordPiece (BERT and its embedding-model relatives). Text is
//     lowercased, stripped of accents and cut into words at whitespace and
//     punctuation; each word is split greedily into the longest pieces,
//     or becomes [UNK].
//   - "t5": the SentencePiece unigram model (UGM: T5, and the
//     XLM-RoBERTa vocabularies of bge-m3, multilingual-e5 and
//     nomic-embed-text-v2-moe). Text is normalized by the file's
//     precompiled charsmap, spaces become "▁", and a Viterbi search picks
//     the segmentation whose token scores sum highest.
//   - "rwkv": RWKV World's escaped byte strings, cut greedily into the
//     longest token at each position.
//
// Results are token-for-token those of llama.cpp's llama_tokenize,
// including its quirks (the regular expressions run on a category-collapsed
// copy of the text, special tokens are split out longest first, Decode's
// clean-up of " ." and " 's"), so prompts give the same ids and therefore
// the same logits.
//
// Encode never parses control-token text such as "<|im_end|>"; use
// EncodeSpecial for text rendered from a chat template. Encode tokenizes
// text that starts a sequence; text appended to a sequence that already
// holds tokens goes through EncodeContinuation, which leaves out
// SentencePiece's dummy-prefix space. Piece returns the bytes of one token,
// which may be part of a UTF-8 sequence; Decode joins pieces and drops
// control tokens. IsEOG tells when to stop generating and EOG lists every
// such token.
//
// Example:
//
//	f, _ := os.Open("model.gguf")
//	st, _ := f.Stat()
//	g, err := gguf.Read(f, st.Size())
//	if err != nil { … }
//	tok, err := tokenizer.FromGGUF(g)
//	if err != nil { … } // errors.Is(err, tokenizer.ErrUnsupported) for other tokenizer types
//	ids := tok.Encode("The quick brown fox", true) // [1 450 4996 17354 1701] with a Llama vocabulary
//	var out []byte
//	for _, id := range ids[1:] {
//		out = tok.AppendPiece(out, id) // " The quick brown fox"
//	}
//	fmt.Println(tok.Decode(ids), tok.IsEOG(tok.EOS()))
package tokenizer
