// Reads groundchat's UI message stream with the AI SDK's own client: the `ai` package's chat
// (AbstractChat, what useChat wraps) over its DefaultChatTransport, which parses the stream with
// the SDK's event-stream parser and uiMessageChunkSchema. Prints what the SDK built, as JSON.
//
//   node ai_sdk_reader.mjs '{"sdk": "<npm prefix>", "api": "http://127.0.0.1:<port>/api/ai-sdk/chat",
//                            "token": "<bearer or null>", "chatId": "<32 hex>", "questions": ["..."],
//                            "lastOnly": <send only the last message, as the README configures it>,
//                            "resume": <first resume the chat's answer in progress, as useChat({ resume: true }) does on mount>}'
//
// Output: {"turns": [{"status", "error", "chunks": [part types as parsed], "message": <UIMessage>,
//                      "streamingInputs": [{"toolCallId", "input"}: each tool input as the chat held it while it streamed]}],
//          "messages": [every UIMessage of the chat]}
import { createRequire } from "node:module";
import { join } from "node:path";

const options = JSON.parse(process.argv[2]);
const require = createRequire(join(options.sdk, "package.json"));
const { AbstractChat, DefaultChatTransport } = require("ai");

// The state a UI framework keeps (React's useChat keeps it in a hook): plain arrays here.
class PlainState {
  constructor() {
    this.status = "ready";
    this.error = undefined;
    this.messages = [];
    this.streamingInputs = [];
  }
  pushMessage(message) { this.messages = [...this.messages, message]; }
  popMessage() { this.messages = this.messages.slice(0, -1); }
  replaceMessage(index, message) {
    this.messages = this.messages.map((m, i) => (i === index ? message : m));
    // What a UI would draw at this moment of a tool call whose input is still arriving.
    for (const part of message.parts || []) {
      if (part.state === "input-streaming") this.streamingInputs.push(structuredClone({ toolCallId: part.toolCallId, input: part.input }));
    }
  }
  snapshot(thing) { return structuredClone(thing); }
}

// The transport as the SDK ships it; only the part types it parsed are noted on the way.
class NotingTransport extends DefaultChatTransport {
  constructor(init, noted) {
    super(init);
    this.noted = noted;
  }
  processResponseStream(stream) {
    const noted = this.noted;
    return super.processResponseStream(stream).pipeThrough(new TransformStream({
      transform(chunk, controller) {
        noted.push(chunk.type);
        controller.enqueue(chunk);
      },
    }));
  }
}

const plain = new PlainState();
class ReadingChat extends AbstractChat {
  constructor(init) {
    super({ ...init, state: plain });
  }
}

const noted = [];
const chat = new ReadingChat({
  id: options.chatId,
  transport: new NotingTransport({
    api: options.api,
    headers: () => (options.token ? { Authorization: `Bearer ${options.token}` } : {}),
    // The README's configuration: only the last message is sent.
    ...(options.lastOnly
      ? { prepareSendMessagesRequest: ({ id, messages }) => ({ body: { id, messages: messages.slice(-1) } }) }
      : {}),
  }, noted),
});

const turns = [];
if (options.resume) {
  // What useChat({ resume: true }) does when the page loads: GET <api>/<id>/stream.
  noted.length = 0;
  await chat.resumeStream();
  const last = chat.messages[chat.messages.length - 1];
  turns.push({ status: chat.status, error: chat.error ? chat.error.message : null, chunks: [...noted],
               message: last && last.role === "assistant" ? last : null });
}
for (const question of options.questions) {
  noted.length = 0;
  plain.streamingInputs = [];
  await chat.sendMessage({ text: question });
  const last = chat.messages[chat.messages.length - 1];
  turns.push({
    status: chat.status,
    error: chat.error ? chat.error.message : null,
    chunks: [...noted],
    message: last && last.role === "assistant" ? last : null,
    streamingInputs: plain.streamingInputs,
  });
}
process.stdout.write(JSON.stringify({ turns, messages: chat.messages }));
