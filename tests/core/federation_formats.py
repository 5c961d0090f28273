"""The two rating sites' game formats, written from their own sources, and checkers of what they require.

mafiaratings (github.com/szotin/mafiaratings at 0ab7207b): the fields and their values are those of
``Game::api_help`` and ``Game::add_time_help`` in include/game.php; the consistency rules are
``Game::check_game_result``, ``check_deaths``, ``check_shooting``, ``check_warnings``,
``check_tech_fouls`` and ``check_gametime`` there, which ``api/ops/game.php?op=create`` runs on every game it
takes. ``players[n].techFouls`` is not in ``api_help`` but is what ``check_tech_fouls`` and
``get_player_death_time`` read: with the ``r`` feature an array of at most two gametimes, as ``warnings``.
The rules code is ``is_valid_rules_code`` in include/rules.php: one digit per option of ``$_rules_options``.

Polemica (github.com/Vyasma-Mafia/polemica-library at 23aa7c1): the shapes are the Kotlin model in
src/main/kotlin/.../model/game/ (PolemicaGame.kt, PolemicaPlayer.kt, Foul.kt, Stage.kt, Role.kt,
Position.kt, PolemicaCheck.kt, PolemicaShot.kt, PolemicaVote.kt, PolemicaBonus.kt, PolemicaGuess.kt,
PolemicaGameResult.kt, ZeroVoting.kt): a non-null Kotlin property is required, an enum is its
integer or string ``value``. Who left the table is what utils/GameUtils.kt ``getKickedFromTable``
reads from the game (shots, final votes, disqualifications).
"""

from __future__ import annotations

from collections import Counter
from typing import Any

SEAT = {"type": "integer", "minimum": 1, "maximum": 10}
ROUND = {"type": "integer", "minimum": 0}

GAMETIMES = ["start", "arrangement", "relaxed sitting", "day start", "night kill speaking", "speaking",
             "voting start", "voting", "voting kill all", "day kill speaking", "night start", "shooting", "don",
             "sheriff", "night end", "end"]

GAMETIME: dict[str, Any] = {
    "type": "object",
    "required": ["round", "time"],
    "additionalProperties": False,
    "properties": {"round": ROUND, "time": {"enum": GAMETIMES}, "speaker": SEAT, "votingRound": ROUND,
                   "nominee": SEAT},
    "allOf": [
        {"if": {"properties": {"time": {"enum": ["speaking", "day kill speaking"]}}},
         "then": {"required": ["speaker"]}},
        {"if": {"properties": {"time": {"enum": ["voting", "voting kill all"]}}},
         "then": {"required": ["votingRound"]}},
    ],
}

MR_PLAYER: dict[str, Any] = {
    "type": "object",
    "required": ["name", "role"],
    "additionalProperties": False,
    "properties": {
        "id": {"type": "integer"},
        "name": {"type": "string"},
        "role": {"enum": ["civ", "maf", "sheriff", "don"]},
        "arranged": ROUND,
        "death": {
            "type": "object", "required": ["round", "type"], "additionalProperties": False,
            "properties": {"round": ROUND, "type": {"enum": ["day", "night", "warnings", "techFouls", "kickOut",
                                                             "teamKickOut", "giveUp"]},
                           "time": GAMETIME},
        },
        "warnings": {"type": "array", "maxItems": 4, "items": GAMETIME},
        "techFouls": {"type": "array", "maxItems": 2, "items": GAMETIME},
        "don": ROUND,
        "sheriff": ROUND,
        "bonus": {"anyOf": [{"type": "number"}, {"enum": ["bestPlayer", "bestMove", "worstMove"]},
                            {"type": "array"}]},
        "legacy": {"type": "array", "maxItems": 3, "items": SEAT},
        "comment": {"type": "string"},
        "voting": {"type": "array", "items": {"anyOf": [
            {"type": "null"}, SEAT, {"type": "array", "minItems": 1, "items": {"anyOf": [SEAT, {"type": "boolean"}]}},
        ]}},
        "nominating": {"type": "array", "items": {"anyOf": [{"type": "null"}, SEAT]}},
        "shooting": {"type": "array", "items": {"anyOf": [{"type": "null"}, SEAT]}},
    },
}

MAFIARATINGS: dict[str, Any] = {
    "type": "object",
    "required": ["features", "startTime", "endTime", "language", "rules", "winner", "moderator", "players"],
    "additionalProperties": False,
    "properties": {
        "id": {"type": "integer"},
        "features": {"type": "string", "pattern": "^[agsdutclhvknwroi]+$"},
        "clubId": {"type": "integer"},
        "eventId": {"type": "integer"},
        "tournamentId": {"type": "integer"},
        "tableNum": {"type": "integer"},
        "gameNum": {"type": "integer"},
        "rating": {"type": "boolean"},
        "startTime": {"type": "string", "format": "date-time"},
        "endTime": {"type": "string", "format": "date-time"},
        "timezone": {"type": "string"},
        "language": {"type": "string", "pattern": "^[a-z]{2}$"},
        "rules": {"type": "string", "pattern": "^[0-9]{13}$"},
        "winner": {"enum": ["civ", "maf", "tie"]},
        "moderator": {"type": "object", "properties": {"id": {"type": "integer"}}},
        "players": {"type": "array", "minItems": 10, "maxItems": 10, "items": MR_PLAYER},
    },
}


RULE_OPTION_VALUES = (2, 5, 10, 3, 4, 2, 2, 2, 3, 2, 2, 3, 2)
"""How many values each option of include/rules.php ``$_rules_options`` has, in the code's order."""


def mafiaratings_problems(game: dict[str, Any]) -> list[str]:
    """What mafiaratings' ``Game::check`` would find wrong (and "fix") in ``game``."""
    problems = [f"is_valid_rules_code: option {i} is {d}" for i, (d, n) in enumerate(zip(
        map(int, game["rules"]), RULE_OPTION_VALUES, strict=True)) if d >= n]
    players = game["players"]
    roles = Counter(p.get("role", "civ") for p in players)
    if roles != Counter({"civ": 6, "sheriff": 1, "maf": 2, "don": 1}):
        problems.append(f"check_game_result: roles {dict(roles)}")
    for number, p in enumerate(players, 1):
        death = p.get("death")
        if "shooting" in p and p["role"] not in ("maf", "don"):
            problems.append(f"check_shooting: red player {number} shoots")
        if death is not None:
            last = death["round"] + 1
            for key in ("nominating", "voting", "shooting"):
                if len(p.get(key, [])) > last:
                    problems.append(f"check_game_result: player {number} {key} after death")
            if death["type"] == "night" and death["round"] == 0:
                problems.append(f"check_deaths: player {number} shot in night 0")
            if death["type"] in ("giveUp", "kickOut", "teamKickOut") and "time" not in death:
                problems.append(f"check_deaths: player {number} death time missing")
        if "legacy" in p and (death is None or death["type"] != "night" or death["round"] > 1):
            problems.append(f"check_game_result: player {number} leaves a legacy without a first night death")
        warnings = len(p.get("warnings", []))
        if warnings == 4 and (death is None or death["type"] != "warnings"):
            problems.append(f"check_warnings: player {number} has 4 warnings but is not dead of them")
        if warnings == 4 and death is not None and death.get("time") == p["warnings"][3]:
            # check_warnings flags a death time equal to the fourth warning's (its comparison reads "== 0").
            problems.append(f"check_warnings: player {number} fourth warning cut to 3")
        techs = p.get("techFouls", [])
        if len(techs) == 2 and (death is None or death["type"] != "techFouls" or death["round"] != techs[1]["round"]):
            problems.append(f"check_tech_fouls: player {number} has 2 tech fouls but is not dead of them then")
        if len(techs) == 2 and death is not None and death.get("time") == techs[1]:
            problems.append(f"check_tech_fouls: player {number} second tech foul cut")
        if death is not None and death["type"] == "techFouls" and len(techs) < 2:
            problems.append(f"get_player_death_time: player {number} dead of tech fouls without the second")
        for key in ("don", "sheriff"):
            if key in p and p[key] < 1:
                problems.append(f"player {number} checked by the {key} in night 0")
    problems += _mr_voted_out(players)
    problems += _mr_everyone_votes(players)
    return problems


def _mr_everyone_votes(players: list[dict[str, Any]]) -> list[str]:
    """``check_voting``: in a round with a vote (two nominees, or one after round 0) every living player voted.

    A removal in the round or the one before may cancel its vote (``is_voting_canceled``): such rounds
    are left to the site.
    """
    problems = []
    rounds = max((len(p.get("nominating", [])) for p in players), default=0)
    for r in range(rounds):
        nominees = {p["nominating"][r] for p in players if r < len(p.get("nominating", [])) and p["nominating"][r]}
        removals = [p for p in players if p.get("death", {}).get("type") in ("warnings", "kickOut", "giveUp")
                    and p["death"]["round"] in (r, r - 1)]
        if not nominees or (r == 0 and len(nominees) == 1) or removals:
            continue
        for number, p in enumerate(players, 1):
            death = p.get("death")
            alive = death is None or death["round"] > r or (death["round"] == r and death["type"] == "day")
            votes = p.get("voting", [])
            if alive and (r >= len(votes) or votes[r] is None):
                problems.append(f"check_voting: player {number} did not vote in round {r}")
    return problems


def _mr_voted_out(players: list[dict[str, Any]]) -> list[str]:
    """``check_voting``/``check_voted_out``: a round's winners who were killed by the vote died that day."""
    problems = []
    rounds = max((len(p.get("voting", [])) for p in players), default=0)
    for r in range(rounds):
        tally: Counter[int] = Counter()
        yes = no = 0
        for p in players:
            votes = p.get("voting", [])
            v = votes[r] if r < len(votes) else None
            if isinstance(v, list):
                if isinstance(v[-1], bool):
                    yes, no = yes + v[-1], no + (not v[-1])
                    v = v[-2]
                else:
                    v = v[-1]
            if v is not None:
                tally[v] += 1
        if not tally:
            continue
        top = max(tally.values())
        winners = [seat for seat, n in tally.items() if n == top]
        killed = (yes > no) if (yes or no) else any(
            players[w - 1].get("death", {}).get("type") == "day" and players[w - 1]["death"]["round"] == r
            for w in winners)
        if killed:
            for w in winners:
                death = players[w - 1].get("death")
                if death is None or death["round"] != r or death["type"] == "night":
                    problems.append(f"check_voted_out: {w} voted out in round {r} but not dead then")
    return problems


# -- Polemica -----------------------------------------------------------------------------------------------------

STAGE_TYPES = ["dealing", "briefing", "comIntro", "speech", "voting", "voted", "shooting", "shooted", "reSpeech",
               "lift", "checks", "toVoting", "toLift", "liftResult", "toDay", "toNight", "donCheck", "comCheck",
               "guess", "comKill", "gameOver"]
LOCAL_DATE_TIME = {"type": "string", "pattern": r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?$"}
STAGE: dict[str, Any] = {
    "type": "object", "required": ["type", "day"],
    "properties": {"type": {"enum": STAGE_TYPES}, "day": {"type": "integer"},
                   "player": {"type": ["integer", "null"]}, "voting": {"type": ["integer", "null"]}},
}
NULLABLE_STAGE = {"anyOf": [{"type": "null"}, STAGE]}
FOUL = {"type": "object", "required": ["time", "stage"], "properties": {"time": LOCAL_DATE_TIME, "stage": STAGE}}
POSITIONS = {"type": "array", "items": SEAT}

PL_PLAYER: dict[str, Any] = {
    "type": "object",
    "required": ["position", "username", "role", "techs", "fouls"],
    "properties": {
        "position": SEAT,
        "username": {"type": "string"},
        "role": {"enum": [0, 1, 2, 3]},
        "techs": {"type": "array", "items": FOUL},
        "fouls": {"type": "array", "items": FOUL},
        "guess": {"anyOf": [{"type": "null"}, {"type": "object", "properties": {
            "civs": {"anyOf": [{"type": "null"}, POSITIONS]}, "mafs": {"anyOf": [{"type": "null"}, POSITIONS]},
            "vice": {"anyOf": [{"type": "null"}, SEAT]}}}]},
        "player": {"anyOf": [{"type": "null"}, {"type": "integer"},
                             {"type": "object", "required": ["id", "username"]}]},
        "disqual": NULLABLE_STAGE,
        "award": {"type": ["number", "null"]},
    },
}

POLEMICA: dict[str, Any] = {
    "type": "object",
    "required": ["master", "scoringType", "version", "started"],
    "properties": {
        "id": {"type": ["integer", "null"]},
        "name": {"type": ["string", "null"]},
        "master": {"type": "integer"},
        "referee": {"anyOf": [{"type": "null"}, {"type": "object", "required": ["id", "username"]}]},
        "scoringVersion": {"type": ["string", "null"]},
        "scoringType": {"type": "integer"},
        "version": {"type": "integer"},
        "zeroVoting": {"enum": [None, "respeech", "liftOnly", "none"]},
        "tags": {"anyOf": [{"type": "null"}, {"type": "array", "items": {"type": "string"}}]},
        "players": {"type": "array", "minItems": 10, "maxItems": 10, "items": PL_PLAYER},
        "checks": {"type": "array", "items": {"type": "object", "required": ["night", "role", "player"],
                                              "properties": {"night": {"type": "integer"}, "role": {"enum": [0, 3]},
                                                             "player": SEAT}}},
        "shots": {"type": "array", "items": {"type": "object", "required": ["night", "shooter", "victim"],
                                             "properties": {"night": {"type": "integer"}, "shooter": SEAT,
                                                            "victim": SEAT}}},
        "stage": NULLABLE_STAGE,
        "votes": {"type": "array", "items": {"type": "object", "required": ["day", "voter", "candidate"],
                                             "properties": {"day": {"type": "integer"},
                                                            "num": {"type": ["integer", "null"]}, "voter": SEAT,
                                                            "candidate": {"anyOf": [{"type": "null"}, SEAT]}}}},
        "comKiller": {"anyOf": [{"type": "null"}, SEAT]},
        "bonuses": {"type": "array", "items": {"type": "object", "required": ["position", "text", "scores", "basic"],
                                               "properties": {"position": SEAT, "text": {"type": "string"},
                                                              "scores": {"type": "number"},
                                                              "basic": {"type": "boolean"}}}},
        "started": LOCAL_DATE_TIME,
        "stop": NULLABLE_STAGE,
        "isLive": {"type": ["boolean", "null"]},
        "result": {"enum": [None, 0, 1]},
        "num": {"type": ["integer", "null"]},
        "table": {"type": ["integer", "null"]},
        "phase": {"type": ["integer", "null"]},
        "factor": {"type": ["number", "null"]},
    },
}


def polemica_kicked(game: dict[str, Any]) -> dict[int, str]:
    """Who left the table and how, read as utils/GameUtils.kt ``getKickedFromTable`` reads the game."""
    roles = {p["position"]: p["role"] for p in game["players"]}
    kicked: dict[int, str] = {}
    for p in game["players"]:
        if p.get("disqual") is not None:
            kicked[p["position"]] = "disqual"
    shots_by_night: dict[int, list[dict[str, Any]]] = {}
    for shot in game["shots"]:
        shots_by_night.setdefault(shot["night"], []).append(shot)
    votes_by_day: dict[int, list[dict[str, Any]]] = {}
    for vote in game["votes"]:
        votes_by_day.setdefault(vote["day"], []).append(vote)
    for step in sorted({*(2 * n + 1 for n in shots_by_night), *(2 * d for d in votes_by_day)}):
        if step % 2:
            shots = shots_by_night[step // 2]
            victims = {s["victim"] for s in shots}
            blacks = [s for s in roles if roles[s] in (0, 1) and s not in kicked]
            if len(victims) == 1 and len(blacks) <= len(shots):
                kicked.setdefault(victims.pop(), "kill")
        else:
            for seat in _final_votes(votes_by_day[step // 2]):
                kicked.setdefault(seat, "voting")
    return kicked


def _final_votes(votes: list[dict[str, Any]]) -> list[int]:
    """``getFinalVotes`` for one day: the seats its last round (and any lift vote) sent away."""
    numbered = [v["num"] for v in votes if v.get("num") is not None]
    if not numbered or max(numbered) == 0:
        return []
    last = max(numbered)
    real = [v for v in votes if v.get("num") == last]
    tally = Counter(v["candidate"] for v in real if v["candidate"] is not None)
    top = max(tally.values())
    leaders = [c for c, n in tally.items() if n == top]
    if len(leaders) > 1:
        expel = [v for v in votes if v.get("num") is None and v["candidate"] is not None]
        return list(tally) if len(expel) > len(real) - len(expel) else []
    return leaders
