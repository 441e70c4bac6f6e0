// Drives a running server with the official openai npm client.
// BASE_URL is the server's /v1 URL. Exits non-zero on the first failure.
import OpenAI from "openai";
import assert from "node:assert/strict";

const client = new OpenAI({ baseURL: process.env.BASE_URL, apiKey: "unused", maxRetries: 0 });

// REAL_MODEL names a real model being served (random weights, so its words
// are not known): the stream must agree with the whole reply, usage must
// count, and a tool round trip must be accepted.
if (process.env.REAL_MODEL) {
  const model = process.env.REAL_MODEL;
  const req = { model, messages: [{ role: "user", content: "Once upon a time" }], max_tokens: 12, temperature: 0 };
  const whole = await client.chat.completions.create(req);
  assert.ok(whole.usage.prompt_tokens > 0 && whole.usage.completion_tokens > 0);
  const stream = await client.chat.completions.create({ ...req, stream: true, stream_options: { include_usage: true } });
  let text = "", usage = null;
  for await (const chunk of stream) {
    if (chunk.choices.length > 0) text += chunk.choices[0].delta.content ?? "";
    if (chunk.usage) usage = chunk.usage;
  }
  assert.equal(text, whole.choices[0].message.content);
  assert.equal(usage.completion_tokens, whole.usage.completion_tokens);
  const tools = [{ type: "function", function: { name: "get_weather", parameters: { type: "object", properties: { location: { type: "string" } } } } }];
  const round = await client.chat.completions.create({ model, tools, max_tokens: 4, messages: [
    { role: "user", content: "What is the weather in Paris?" },
    { role: "assistant", content: null, tool_calls: [{ id: "call_1", type: "function", function: { name: "get_weather", arguments: "{\"location\":\"Paris\"}" } }] },
    { role: "tool", tool_call_id: "call_1", content: "sunny" },
  ] });
  assert.ok(round.usage.prompt_tokens > whole.usage.prompt_tokens);
  const rreq = { model, input: "Once upon a time", max_output_tokens: 12, temperature: 0 };
  const rwhole = await client.responses.create(rreq);
  const rstream = await client.responses.stream(rreq).finalResponse();
  assert.equal(rstream.output_text, rwhole.output_text);
  assert.ok(rwhole.usage.input_tokens > 0 && rwhole.usage.output_tokens > 0);
  const comp = await client.completions.create({ model, prompt: "Once upon a time", max_tokens: 5 });
  assert.ok(comp.usage.completion_tokens > 0);
  // Embeddings: without encoding_format the client asks for base64 and
  // decodes it; that must give the floats asked for explicitly.
  const input = ["Once upon a time", "the cat sat on the mat"];
  const b64 = await client.embeddings.create({ model, input });
  const floats = await client.embeddings.create({ model, input, encoding_format: "float" });
  assert.equal(b64.data.length, 2);
  assert.ok(b64.usage.prompt_tokens > 0 && b64.usage.total_tokens === b64.usage.prompt_tokens);
  for (const [i, d] of b64.data.entries()) {
    assert.equal(d.index, i);
    // The JSON floats are float32s' shortest decimals.
    assert.deepEqual(Array.from(d.embedding), floats.data[i].embedding.map(Math.fround));
    const norm = Math.sqrt(d.embedding.reduce((s, x) => s + x * x, 0));
    assert.ok(Math.abs(norm - 1) < 1e-5, `embedding ${i} has length ${norm}`);
  }
  console.log("node openai client: real model checks passed");
  process.exit(0);
}

// Non-streaming chat.
const resp = await client.chat.completions.create({
  model: "tiny",
  messages: [{ role: "system", content: "Be nice." }, { role: "user", content: "Hi" }],
  max_tokens: 16,
  temperature: 0.5,
});
assert.equal(resp.choices[0].message.content, "Hello, world!");
assert.equal(resp.choices[0].finish_reason, "stop");
assert.equal(resp.usage.completion_tokens, 4);

// Streaming chat with usage.
const stream = await client.chat.completions.create({
  model: "tiny",
  messages: [{ role: "user", content: "Hi" }],
  stream: true,
  stream_options: { include_usage: true },
});
let text = "", finish = null, usage = null;
for await (const chunk of stream) {
  if (chunk.choices.length > 0) {
    text += chunk.choices[0].delta.content ?? "";
    finish = chunk.choices[0].finish_reason ?? finish;
  }
  if (chunk.usage) usage = chunk.usage;
}
assert.equal(text, "Hello, world!");
assert.equal(finish, "stop");
assert.equal(usage.completion_tokens, 4);

// Tool call, result, answer (the stream helper accumulates the reply).
const tools = [{ type: "function", function: { name: "get_weather", description: "Weather at a place",
  parameters: { type: "object", properties: { location: { type: "string" } }, required: ["location"] } } }];
const messages = [{ role: "user", content: "What is the weather in Paris?" }];
const call = await client.chat.completions.create({ model: "tiny", messages, tools });
const tc = call.choices[0].message.tool_calls[0];
assert.equal(call.choices[0].finish_reason, "tool_calls");
assert.equal(tc.function.name, "get_weather");
assert.deepEqual(JSON.parse(tc.function.arguments), { location: "Paris" });
messages.push(call.choices[0].message, { role: "tool", tool_call_id: tc.id, content: "sunny" });
const runner = client.chat.completions.stream({ model: "tiny", messages, tools });
const final = await runner.finalChatCompletion();
assert.equal(final.choices[0].message.content, "It is sunny in Paris.");

// Responses API, whole and streamed: the stream helper rebuilds the
// response from the events and refuses ones out of order.
const rtools = [{ type: "function", name: "get_weather", strict: false,
  parameters: { type: "object", properties: { location: { type: "string" } }, required: ["location"] } }];
const r1 = await client.responses.create({ model: "tiny", instructions: "Be nice.", input: "Hi" });
assert.equal(r1.output_text, "Hello, world!");
assert.equal(r1.status, "completed");
assert.equal(r1.usage.output_tokens, 4);
let deltas = "";
const rs = client.responses.stream({ model: "tiny", input: "Hi" });
rs.on("response.output_text.delta", (e) => { deltas += e.delta; });
const r2 = await rs.finalResponse();
assert.equal(r2.output_text, "Hello, world!");
assert.equal(deltas, "Hello, world!");
const r3 = await client.responses.stream({ model: "tiny", input: "What is the weather in Paris?", tools: rtools }).finalResponse();
const fc = r3.output[0];
assert.equal(fc.type, "function_call");
assert.equal(fc.name, "get_weather");
assert.deepEqual(JSON.parse(fc.arguments), { location: "Paris" });
const r4 = await client.responses.create({ model: "tiny", tools: rtools, input: [
  { role: "user", content: "What is the weather in Paris?" }, fc,
  { type: "function_call_output", call_id: fc.call_id, output: "sunny" }] });
assert.equal(r4.output_text, "It is sunny in Paris.");

// Errors arrive as APIError with OpenAI's fields.
await assert.rejects(
  client.chat.completions.create({ model: "tiny", messages: [{ role: "user", content: "Hi" }], n: 17 }),
  (err) => err instanceof OpenAI.APIError && err.status === 400 && err.param === "n",
);
console.log("node openai client: all checks passed");
