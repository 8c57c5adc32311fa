package kvstore

// The kvstore's ordered engine: RSET/RGET/RDEL/RMOD/REXIST, the generic
// engine handlers (cmd_engine.go) on db.tree.

func treeEngine(db *DB) table { return db.tree }

var (
	cmdRSet   = engineSet(treeEngine)
	cmdRGet   = engineGet(treeEngine)
	cmdRDel   = engineDel(treeEngine)
	cmdRMod   = engineMod(treeEngine)
	cmdRExist = engineExist(treeEngine)
)
