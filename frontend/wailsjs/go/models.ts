export namespace apitype {
	
	export class Approval {
	    id: string;
	    tool: string;
	    class: string;
	    client: string;
	    profile: string;
	    tab: number;
	    sites: string[];
	    summary: string;
	    sinceMs: number;
	    deadlineMs: number;
	
	    static createFrom(source: any = {}) {
	        return new Approval(source);
	    }
	
	    constructor(source: any = {}) {
	        if ('string' === typeof source) source = JSON.parse(source);
	        this.id = source["id"];
	        this.tool = source["tool"];
	        this.class = source["class"];
	        this.client = source["client"];
	        this.profile = source["profile"];
	        this.tab = source["tab"];
	        this.sites = source["sites"];
	        this.summary = source["summary"];
	        this.sinceMs = source["sinceMs"];
	        this.deadlineMs = source["deadlineMs"];
	    }
	}
	export class Client {
	    id: string;
	    name: string;
	    path: string;
	    installed: boolean;
	    connected: boolean;
	    mode: string;
	    reload: string;
	    error: string;
	
	    static createFrom(source: any = {}) {
	        return new Client(source);
	    }
	
	    constructor(source: any = {}) {
	        if ('string' === typeof source) source = JSON.parse(source);
	        this.id = source["id"];
	        this.name = source["name"];
	        this.path = source["path"];
	        this.installed = source["installed"];
	        this.connected = source["connected"];
	        this.mode = source["mode"];
	        this.reload = source["reload"];
	        this.error = source["error"];
	    }
	}
	export class ClientOutcome {
	    message: string;
	    changed: boolean;
	    client: Client;
	
	    static createFrom(source: any = {}) {
	        return new ClientOutcome(source);
	    }
	
	    constructor(source: any = {}) {
	        if ('string' === typeof source) source = JSON.parse(source);
	        this.message = source["message"];
	        this.changed = source["changed"];
	        this.client = this.convertValues(source["client"], Client);
	    }
	
		convertValues(a: any, classs: any, asMap: boolean = false): any {
		    if (!a) {
		        return a;
		    }
		    if (a.slice && a.map) {
		        return (a as any[]).map(elem => this.convertValues(elem, classs));
		    } else if ("object" === typeof a) {
		        if (asMap) {
		            for (const key of Object.keys(a)) {
		                a[key] = new classs(a[key]);
		            }
		            return a;
		        }
		        return new classs(a);
		    }
		    return a;
		}
	}
	export class OutdatedExtension {
	    profile: string;
	    message: string;
	
	    static createFrom(source: any = {}) {
	        return new OutdatedExtension(source);
	    }
	
	    constructor(source: any = {}) {
	        if ('string' === typeof source) source = JSON.parse(source);
	        this.profile = source["profile"];
	        this.message = source["message"];
	    }
	}
	export class ExtensionState {
	    connected: boolean;
	    known: number;
	    dir: string;
	    written: boolean;
	    writtenVersion: string;
	    version: string;
	    id: string;
	    outdated: OutdatedExtension[];
	    steps: string[];
	
	    static createFrom(source: any = {}) {
	        return new ExtensionState(source);
	    }
	
	    constructor(source: any = {}) {
	        if ('string' === typeof source) source = JSON.parse(source);
	        this.connected = source["connected"];
	        this.known = source["known"];
	        this.dir = source["dir"];
	        this.written = source["written"];
	        this.writtenVersion = source["writtenVersion"];
	        this.version = source["version"];
	        this.id = source["id"];
	        this.outdated = this.convertValues(source["outdated"], OutdatedExtension);
	        this.steps = source["steps"];
	    }
	
		convertValues(a: any, classs: any, asMap: boolean = false): any {
		    if (!a) {
		        return a;
		    }
		    if (a.slice && a.map) {
		        return (a as any[]).map(elem => this.convertValues(elem, classs));
		    } else if ("object" === typeof a) {
		        if (asMap) {
		            for (const key of Object.keys(a)) {
		                a[key] = new classs(a[key]);
		            }
		            return a;
		        }
		        return new classs(a);
		    }
		    return a;
		}
	}
	
	export class PairingView {
	    id: string;
	    label: string;
	    code: string;
	    sinceMs: number;
	    expiresMs: number;
	
	    static createFrom(source: any = {}) {
	        return new PairingView(source);
	    }
	
	    constructor(source: any = {}) {
	        if ('string' === typeof source) source = JSON.parse(source);
	        this.id = source["id"];
	        this.label = source["label"];
	        this.code = source["code"];
	        this.sinceMs = source["sinceMs"];
	        this.expiresMs = source["expiresMs"];
	    }
	}
	export class RefusedView {
	    id: string;
	    label: string;
	    refusal: string;
	    reason: string;
	    nextStep: string;
	    atMs: number;
	
	    static createFrom(source: any = {}) {
	        return new RefusedView(source);
	    }
	
	    constructor(source: any = {}) {
	        if ('string' === typeof source) source = JSON.parse(source);
	        this.id = source["id"];
	        this.label = source["label"];
	        this.refusal = source["refusal"];
	        this.reason = source["reason"];
	        this.nextStep = source["nextStep"];
	        this.atMs = source["atMs"];
	    }
	}
	export class TimelineEntry {
	    id: number;
	    callId: string;
	    timeMs: number;
	    client: string;
	    token: string;
	    profile: string;
	    tab: number;
	    tool: string;
	    args: string;
	    class: string;
	    site: string;
	    decision: string;
	    durationMs: number;
	    rttMs: number;
	    outcome: string;
	    error: string;
	
	    static createFrom(source: any = {}) {
	        return new TimelineEntry(source);
	    }
	
	    constructor(source: any = {}) {
	        if ('string' === typeof source) source = JSON.parse(source);
	        this.id = source["id"];
	        this.callId = source["callId"];
	        this.timeMs = source["timeMs"];
	        this.client = source["client"];
	        this.token = source["token"];
	        this.profile = source["profile"];
	        this.tab = source["tab"];
	        this.tool = source["tool"];
	        this.args = source["args"];
	        this.class = source["class"];
	        this.site = source["site"];
	        this.decision = source["decision"];
	        this.durationMs = source["durationMs"];
	        this.rttMs = source["rttMs"];
	        this.outcome = source["outcome"];
	        this.error = source["error"];
	    }
	}
	export class TimelineFacets {
	    clients: string[];
	    profiles: string[];
	    outcomes: string[];
	
	    static createFrom(source: any = {}) {
	        return new TimelineFacets(source);
	    }
	
	    constructor(source: any = {}) {
	        if ('string' === typeof source) source = JSON.parse(source);
	        this.clients = source["clients"];
	        this.profiles = source["profiles"];
	        this.outcomes = source["outcomes"];
	    }
	}
	export class TimelineFilter {
	    client: string;
	    profile: string;
	    outcome: string;
	    beforeId: number;
	    limit: number;
	
	    static createFrom(source: any = {}) {
	        return new TimelineFilter(source);
	    }
	
	    constructor(source: any = {}) {
	        if ('string' === typeof source) source = JSON.parse(source);
	        this.client = source["client"];
	        this.profile = source["profile"];
	        this.outcome = source["outcome"];
	        this.beforeId = source["beforeId"];
	        this.limit = source["limit"];
	    }
	}

}

export namespace app {
	
	export class TabView {
	    number: number;
	    title: string;
	    url: string;
	    current: boolean;
	    acting: boolean;
	    owner: string;
	
	    static createFrom(source: any = {}) {
	        return new TabView(source);
	    }
	
	    constructor(source: any = {}) {
	        if ('string' === typeof source) source = JSON.parse(source);
	        this.number = source["number"];
	        this.title = source["title"];
	        this.url = source["url"];
	        this.current = source["current"];
	        this.acting = source["acting"];
	        this.owner = source["owner"];
	    }
	}
	export class ProfileView {
	    id: string;
	    label: string;
	    slug: string;
	    status: string;
	    extVersion: string;
	    extOutdated?: string;
	    lastSeenMs: number;
	    acting: boolean;
	    tabs: TabView[];
	
	    static createFrom(source: any = {}) {
	        return new ProfileView(source);
	    }
	
	    constructor(source: any = {}) {
	        if ('string' === typeof source) source = JSON.parse(source);
	        this.id = source["id"];
	        this.label = source["label"];
	        this.slug = source["slug"];
	        this.status = source["status"];
	        this.extVersion = source["extVersion"];
	        this.extOutdated = source["extOutdated"];
	        this.lastSeenMs = source["lastSeenMs"];
	        this.acting = source["acting"];
	        this.tabs = this.convertValues(source["tabs"], TabView);
	    }
	
		convertValues(a: any, classs: any, asMap: boolean = false): any {
		    if (!a) {
		        return a;
		    }
		    if (a.slice && a.map) {
		        return (a as any[]).map(elem => this.convertValues(elem, classs));
		    } else if ("object" === typeof a) {
		        if (asMap) {
		            for (const key of Object.keys(a)) {
		                a[key] = new classs(a[key]);
		            }
		            return a;
		        }
		        return new classs(a);
		    }
		    return a;
		}
	}
	export class State {
	    version: string;
	    paused: boolean;
	    profiles: ProfileView[];
	    pairing: apitype.PairingView[];
	    refused: apitype.RefusedView[];
	    approvals: apitype.Approval[];
	    apps: string[];
	    connected: boolean;
	    problem: string;
	
	    static createFrom(source: any = {}) {
	        return new State(source);
	    }
	
	    constructor(source: any = {}) {
	        if ('string' === typeof source) source = JSON.parse(source);
	        this.version = source["version"];
	        this.paused = source["paused"];
	        this.profiles = this.convertValues(source["profiles"], ProfileView);
	        this.pairing = this.convertValues(source["pairing"], apitype.PairingView);
	        this.refused = this.convertValues(source["refused"], apitype.RefusedView);
	        this.approvals = this.convertValues(source["approvals"], apitype.Approval);
	        this.apps = source["apps"];
	        this.connected = source["connected"];
	        this.problem = source["problem"];
	    }
	
		convertValues(a: any, classs: any, asMap: boolean = false): any {
		    if (!a) {
		        return a;
		    }
		    if (a.slice && a.map) {
		        return (a as any[]).map(elem => this.convertValues(elem, classs));
		    } else if ("object" === typeof a) {
		        if (asMap) {
		            for (const key of Object.keys(a)) {
		                a[key] = new classs(a[key]);
		            }
		            return a;
		        }
		        return new classs(a);
		    }
		    return a;
		}
	}

}

