// A weather agent in Node with nothing but `fetch`: OpenAI Chat Completions with one tool, looping
// until the model answers without a tool call. The task is in REPLIO_TASK; the answer goes to stdout.
import { randomUUID } from "node:crypto";
import { writeFileSync } from "node:fs";
import { join } from "node:path";

const TOOLS = [
  {
    type: "function",
    function: {
      name: "get_weather",
      description: "Get today's weather forecast for a city.",
      parameters: { type: "object", properties: { city: { type: "string" } }, required: ["city"] },
    },
  },
];
const FORECASTS = { Paris: { forecast: "sunny", celsius: 21 }, London: { forecast: "rainy", celsius: 14 } };

function getWeather({ city }) {
  return JSON.stringify({ city, ...(FORECASTS[city] ?? { forecast: "unknown" }) });
}

if (process.env.AGENT_ENV_DUMP) {
  writeFileSync(join(process.env.AGENT_ENV_DUMP, `node-${randomUUID()}.json`), JSON.stringify(process.env));
}
process.stderr.write(`node: OPENAI_API_KEY=${process.env.OPENAI_API_KEY}\n`);

const messages = [{ role: "user", content: process.env.REPLIO_TASK }];
let answer = "";
for (let step = 0; step < 5; step++) {
  const response = await fetch(`${process.env.OPENAI_BASE_URL}/chat/completions`, {
    method: "POST",
    headers: { "content-type": "application/json", authorization: `Bearer ${process.env.OPENAI_API_KEY}` },
    body: JSON.stringify({ model: "gpt-4o-mini", messages, tools: TOOLS }),
  });
  if (!response.ok) {
    throw new Error(`HTTP ${response.status}: ${await response.text()}`);
  }
  const message = (await response.json()).choices[0].message;
  messages.push(message);
  if (!message.tool_calls?.length) {
    answer = message.content ?? "";
    break;
  }
  for (const call of message.tool_calls) {
    const result = call.function.name === "get_weather" ? getWeather(JSON.parse(call.function.arguments))
      : `Error: unknown tool ${call.function.name}`;
    messages.push({ role: "tool", tool_call_id: call.id, content: result });
  }
}
console.log(answer);
