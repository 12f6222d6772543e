// placeholder until the plan kernel lands
export function abiVersion(): u32 { return 1; }
