/**
 * Imported first by the scale-out bench: the simulator in the bench process logs only errors
 * unless LOG_LEVEL says otherwise (a black-holed replica's requests would fill the console).
 * The replicas set their own level.
 */
process.env.LOG_LEVEL ??= 'fatal';
