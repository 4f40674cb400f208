-- Claim one attempt of a wallet event's delivery, unless a reorg removed the event.
-- KEYS[1]  the event's vanished marker (`wm:vanished:<webhook id>`, set by the watcher when the
--          event's transfer is no longer on chain)
-- KEYS[2]  the event's sending marker (`wm:sending:<webhook id>`)
-- ARGV[1]  sending marker lifetime, ms (longer than one attempt)
-- Returns `vanished` (nothing may be sent) or `claimed` (the sending marker is set). Atomic, so a
-- watcher that marks the event vanished either sees the attempt in flight (and its removed event
-- waits for it) or the attempt sees the mark (and sends nothing).
if redis.call('EXISTS', KEYS[1]) == 1 then
  return 'vanished'
end
redis.call('SET', KEYS[2], '1', 'PX', ARGV[1])
return 'claimed'
