// Drives a running server with the official openai npm client.
// BASE_URL is the server's /v1 URL. Exits non-zero on the first failure.
import OpenAI from "openai";
import assert from "node:assert/strict";

const client = new OpenAI({ baseURL: process.env.BASE_URL, apiKey: "unused", maxRetries: 0 });

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

// Errors arrive as APIError with OpenAI's fields.
await assert.rejects(
  client.chat.completions.create({ model: "tiny", messages: [{ role: "user", content: "Hi" }], n: 2 }),
  (err) => err instanceof OpenAI.APIError && err.status === 400 && err.param === "n",
);
console.log("node openai client: all checks passed");
