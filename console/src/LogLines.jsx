import { useEffect, useRef } from 'preact/hooks';

// Lines of a log as they come (a template build, a process's output, a
// console log): kept scrolled to the end unless the reader scrolled up.
export function LogLines({ lines, label }) {
  const box = useRef(null);
  const follow = useRef(true);
  useEffect(() => {
    if (follow.current && box.current) box.current.scrollTop = box.current.scrollHeight;
  }, [lines]);
  const onScroll = () => {
    const b = box.current;
    follow.current = b.scrollTop + b.clientHeight >= b.scrollHeight - 4;
  };
  return (
    <pre class="log" ref={box} onScroll={onScroll} tabindex="0" aria-label={label} role="log">
      {lines.join('\n')}
    </pre>
  );
}
