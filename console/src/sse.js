// Server-sent events from a fetch() Response (EventSource cannot send the
// Authorization header): onMessage({event, data}) per event, data parsed as
// JSON, and onComment(text) per comment line (": subscribed").
export async function readSse(res, onMessage, onComment = () => {}) {
  const reader = res.body.pipeThrough(new TextDecoderStream()).getReader();
  let buffered = '';
  for (;;) {
    const { value, done } = await reader.read();
    if (done) return;
    buffered += value;
    let end;
    while ((end = buffered.indexOf('\n\n')) >= 0) {
      dispatch(buffered.slice(0, end), onMessage, onComment);
      buffered = buffered.slice(end + 2);
    }
  }
}

function dispatch(block, onMessage, onComment) {
  let event = 'message';
  const data = [];
  for (const line of block.split('\n')) {
    if (line.startsWith(':')) onComment(line.slice(1).trim());
    else if (line.startsWith('event:')) event = line.slice(6).trim();
    else if (line.startsWith('data:')) data.push(line.slice(5).trimStart());
  }
  if (data.length) onMessage({ event, data: JSON.parse(data.join('\n')) });
}
