/* Lua sources of the store's scripts (see scripts.h). */
#include "scripts.h"

#include <stddef.h>

static const char *const sources[MC_SCRIPT_COUNT] = {
    [MC_SCRIPT_CHECKOUT] =
        "if redis.call('EXISTS', KEYS[1]) == 0 then return {'NOT_FOUND'} end\n"
        /* The identifier entry named an entity that does not hold the value (renamed):
         * stale, unless a check-out holds the entity (its writer may be claiming that
         * value). Not checked out: check it out (the caller's token) so nobody can give it
         * the value meanwhile, and answer STALE: the caller removes the entry if it still
         * names this dbid, then releases. A retry with the same token answers STALE again. */
        "if ARGV[4] ~= '' and redis.call('HGET', KEYS[1], ARGV[4]) ~= ARGV[5] then\n"
        "  local tok = redis.call('HGET', KEYS[2], 'token')\n"
        "  if tok and tok ~= ARGV[3] then return {'NOT_FOUND'} end\n"
        "  if not tok then\n"
        "    local t = redis.call('TIME')\n"
        "    redis.call('HSET', KEYS[2], 'owner', ARGV[1], 'incarnation', ARGV[2], 'state',"
        " 'loading', 'token', ARGV[3], 'since', t[1])\n"
        "  end\n"
        "  return {'STALE'} end\n"
        "local o = redis.call('HMGET', KEYS[2], 'owner', 'incarnation', 'state', 'mailbox',"
        " 'token')\n"
        "if o[1] then\n"
        "  if o[5] == ARGV[3] then return {'OK'} end\n"
        "  return {'OWNED', o[1], o[2] or '0', o[3] or 'loading', o[4] or ''}\n"
        "end\n"
        "local t = redis.call('TIME')\n"
        "redis.call('HSET', KEYS[2], 'owner', ARGV[1], 'incarnation', ARGV[2], 'state',"
        " 'loading', 'token', ARGV[3], 'since', t[1])\n"
        "return {'OK'}\n",
    [MC_SCRIPT_MARK_LIVE] =
        "local t = redis.call('HGET', KEYS[1], 'token')\n"
        "if not t then return {'FENCED', 'not checked out'} end\n"
        "if t ~= ARGV[1] then return {'FENCED', 'checked out with another token'} end\n"
        "redis.call('HSET', KEYS[1], 'state', 'live', 'mailbox', ARGV[2])\n"
        "return {'OK'}\n",
    [MC_SCRIPT_RELEASE] =
        "local t = redis.call('HGET', KEYS[1], 'token')\n"
        "if not t then return {'OK'} end\n"
        "if t ~= ARGV[1] then return {'FENCED', 'checked out with another token'} end\n"
        "redis.call('DEL', KEYS[1])\n"
        "return {'OK'}\n",
    [MC_SCRIPT_RELEASE_OWNER] =
        "local o = redis.call('HMGET', KEYS[1], 'owner', 'incarnation')\n"
        "if not o[1] then return {'OK', 'absent'} end\n"
        "if o[1] ~= ARGV[1] then return {'OK', '0'} end\n"
        "if ARGV[2] == '0' or o[2] == ARGV[2] then\n"
        "  redis.call('DEL', KEYS[1]) return {'OK', '1'} end\n"
        "return {'OK', 'keep'}\n",
    [MC_SCRIPT_WRITE] =
        "local t = redis.call('HGET', KEYS[2], 'token')\n"
        "if not t then return {'FENCED', 'not checked out'} end\n"
        "if t ~= ARGV[1] then return {'FENCED', 'checked out with another token'} end\n"
        "local sn = tonumber(ARGV[5]) or 0\n"
        "if sn > 0 and sn < (tonumber(redis.call('HGET', KEYS[2], 'serial') or '0') or 0)"
        " then return {'SUPERSEDED'} end\n"
        "local old = ''\n"
        "if ARGV[3] ~= '' then\n"
        "  old = redis.call('HGET', KEYS[1], ARGV[3]) or ''\n"
        "  if old ~= ARGV[4] and ARGV[2] ~= '1' then return {'CLAIM', old} end\n"
        "  if old == ARGV[4] then old = '' end\n"
        "end\n"
        "redis.call('HSET', KEYS[1], unpack(ARGV, 6))\n"
        "if sn > 0 then redis.call('HSET', KEYS[2], 'serial', ARGV[5]) end\n"
        "return {'OK', old}\n",
    [MC_SCRIPT_CREATE] =
        "if redis.call('EXISTS', KEYS[1]) == 1 then\n"
        "  if redis.call('HGET', KEYS[2], 'token') == ARGV[1] then return {'OK'} end\n"
        "  return {'EXISTS'}\n"
        "end\n"
        "redis.call('HSET', KEYS[1], unpack(ARGV, 4))\n"
        "local t = redis.call('TIME')\n"
        "redis.call('HSET', KEYS[2], 'owner', ARGV[2], 'incarnation', ARGV[3], 'state',"
        " 'loading', 'token', ARGV[1], 'since', t[1])\n"
        "return {'OK'}\n",
    [MC_SCRIPT_IMPORT] =
        "if redis.call('EXISTS', KEYS[2]) == 1 then return {'OWNED'} end\n"
        "if redis.call('EXISTS', KEYS[1]) == 1 then\n"
        "  if ARGV[1] ~= '1' then return {'EXISTS'} end\n"
        "  redis.call('DEL', KEYS[1])\n"
        "end\n"
        "redis.call('HSET', KEYS[1], unpack(ARGV, 2))\n"
        "return {'OK'}\n",
    [MC_SCRIPT_DELETE] =
        "if redis.call('EXISTS', KEYS[1]) == 0 then return {'NOT_FOUND'} end\n"
        "local t = redis.call('HGET', KEYS[2], 'token')\n"
        "if ARGV[1] ~= '' then\n"
        "  if not t then return {'FENCED', 'not checked out'} end\n"
        "  if t ~= ARGV[1] then return {'FENCED', 'checked out with another token'} end\n"
        "elseif t and ARGV[2] ~= '1' then\n"
        "  return {'OWNED'}\n"
        "end\n"
        "local id = ''\n"
        "if ARGV[3] ~= '' then id = redis.call('HGET', KEYS[1], ARGV[3]) or '' end\n"
        "redis.call('DEL', KEYS[1], KEYS[2])\n"
        "return {'OK', id}\n",
    [MC_SCRIPT_CLAIM] =
        "local h = redis.call('GET', KEYS[1])\n"
        "if not h then redis.call('SET', KEYS[1], ARGV[1]) return {'OK', '1'} end\n"
        "if h == ARGV[1] then return {'OK', '0'} end\n"
        "return {'IDENT_TAKEN', h}\n",
    [MC_SCRIPT_UNCLAIM] =
        "if redis.call('GET', KEYS[1]) == ARGV[1] then redis.call('DEL', KEYS[1]) end\n"
        "return {'OK'}\n",
    [MC_SCRIPT_SCHEMA_PUT] =
        "redis.call('DEL', KEYS[1])\n"
        "if #ARGV > 0 then redis.call('HSET', KEYS[1], unpack(ARGV)) end\n"
        "return {'OK'}\n",
    [MC_SCRIPT_TAKE_OVER] =
        /* By token only: a name can be reused (a process registering during a manager
         * restart may get a returning one's name), a token is drawn afresh for each
         * check-out and takeover (128 random bits). */
        "local t = redis.call('HGET', KEYS[1], 'token')\n"
        "if not t then return {'FENCED', 'not checked out'} end\n"
        "if t ~= ARGV[1] then return {'FENCED', 'checked out with another token'} end\n"
        "redis.call('HSET', KEYS[1], 'owner', ARGV[2], 'incarnation', ARGV[3], 'token',"
        " ARGV[4], 'state', 'live', 'mailbox', ARGV[5])\n"
        "redis.call('HDEL', KEYS[1], 'serial')\n"
        "return {'OK'}\n",
    [MC_SCRIPT_RAISE] =
        "local v = tonumber(redis.call('GET', KEYS[1]) or '0') or 0\n"
        "if v < tonumber(ARGV[1]) then redis.call('SET', KEYS[1], ARGV[1]) end\n"
        "return {'OK'}\n",
};

const char *mc_script_source(mc_script_id id)
{
    return (id >= 0 && id < MC_SCRIPT_COUNT) ? sources[id] : NULL;
}
